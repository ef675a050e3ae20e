"""The SQL of the conversation capability: deliveries (push, queue, inject, wake), handoffs,
reports and activity, one module per job; services reach the tables only through these."""
