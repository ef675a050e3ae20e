"""The PostgreSQL backend of the store (docs/many-machines.md): `Store`'s interface over a
psycopg pool (`store`), the store modules' SQLite SQL translated on its way (`dialect`) through
a sqlite3-like face of a psycopg connection (`connection`), and the schema (`schema`).
Imported only when `[store] url` or `ALP_STORE_URL` names a database."""
