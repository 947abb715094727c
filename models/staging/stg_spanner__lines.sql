{{ staged_lines('spanner_lines') }}
