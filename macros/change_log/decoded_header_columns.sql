{#- The columns of a decoded snapshot file header (python_udfs/snapshots.py), one a line, the
    lines after the first indented by `indent` spaces: `header`, the row its family's header UDF
    returned for the first line of a file of `relation`, gives the table, the header_json its
    rows are decoded with (none for a line made valid UTF-8: it is quarantined, and with it every
    row of its file), the column types and `extra_fields`; a line with a load error or a
    decoding error keeps that error and its text, for the quarantine. -#}
{% macro decoded_header_columns(relation, header, extra_fields=[], indent=8) -%}
    {%- set line = relation ~ '.' -%}
    {%- set row = line ~ header ~ '.' -%}
    {%- set columns = [
        line ~ 'source_name',
        line ~ 'file_path',
        line ~ 'line_number',
        row ~ 'source_table',
        'if(' ~ line ~ 'load_error is null, ' ~ row ~ 'header_json, null) as header_json',
        row ~ 'column_types',
    ] -%}
    {%- for field in extra_fields -%}
        {%- do columns.append(row ~ field) -%}
    {%- endfor -%}
    {%- do columns.extend([
        line ~ 'landed_at',
        line ~ 'landing_run',
        line_error_columns(line, row, ',\n' ~ ' ' * indent),
    ]) -%}
    {{- columns | join(',\n' ~ ' ' * indent) -}}
{%- endmacro %}
