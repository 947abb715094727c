{#- The rules the row_rules test (tests/dbt/generic/row_rules.sql) checks, as one string
    expression: the names of the rules a row breaks, comma-separated, '' when it breaks none. -#}
{% macro broken_row_rules(not_null, accepted_values) -%}
    {%- set rules = [] -%}
    {%- for column in not_null -%}
        {%- do rules.append(
            "case when " ~ column ~ " is null then '" ~ column ~ " is null' end"
        ) -%}
    {%- endfor -%}
    {%- for column, values in accepted_values.items() -%}
        {%- do rules.append(
            "case when " ~ column ~ " not in ('" ~ values | join("', '") ~ "') then '"
            ~ column ~ " not in (" ~ values | join(", ") ~ ")' end"
        ) -%}
    {%- endfor -%}
    concat_ws(', ', {{ rules | join(', ') }})
{%- endmacro %}
