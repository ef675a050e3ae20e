"""Budgets: what a thread or a schedule may spend over all its roots (USD or tokens), the
level a spend is at, and the burn-rate forecast `alp ps` shows. Pure: no IO, no clock."""
