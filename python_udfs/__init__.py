"""Pure-Python logic behind the warehouse's Spark UDFs (unit-tested without Spark)."""
