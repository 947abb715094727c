"""CDC warehouse runtime: Spark session, landing of raw files, and the dbt entry point."""
