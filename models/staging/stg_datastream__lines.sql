{{ staged_lines('datastream_lines') }}
