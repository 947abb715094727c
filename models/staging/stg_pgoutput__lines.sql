{{ staged_lines('pgoutput_lines') }}
