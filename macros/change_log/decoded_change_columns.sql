{#- The columns of a decoded line as the change log takes them (docs/decisions/001), one a line,
    the lines after the first indented by `indent` spaces: `decoded`, the row its family's UDF
    returned for a line of `relation` (the line's own columns beside it), gives the change fields
    and `extra_fields`; committed_at, epoch microseconds from the UDF, becomes a timestamp; a
    line with a load error or a decoding error keeps that error and its text, for the
    quarantine. -#}
{% macro decoded_change_columns(relation, decoded, extra_fields=[], indent=8) -%}
    {%- set line = relation ~ '.' -%}
    {%- set row = line ~ decoded ~ '.' -%}
    {%- set columns = [line ~ 'source_name', line ~ 'file_path', line ~ 'line_number'] -%}
    {%- for field in change_fields().split(',') | reject('equalto', 'committed_at') | list
        + extra_fields -%}
        {%- do columns.append(row ~ field) -%}
    {%- endfor -%}
    {%- do columns.extend([
        line ~ 'landed_at',
        line ~ 'landing_run',
        'timestamp_micros(' ~ row ~ 'committed_at) as committed_at',
        line_error_columns(line, row, ',\n' ~ ' ' * indent),
    ]) -%}
    {{- columns | join(',\n' ~ ' ' * indent) -}}
{%- endmacro %}
