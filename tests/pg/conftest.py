def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "postgres: starts a real local PostgreSQL 15 (installed with apt-get if missing, as root)",
    )
