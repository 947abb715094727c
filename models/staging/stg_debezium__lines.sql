{{ staged_lines('debezium_lines') }}
