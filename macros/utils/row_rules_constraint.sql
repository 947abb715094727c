{#- A table's rules about single rows as one Delta CHECK constraint named `name` (a post-hook):
    the `not_null` columns hold a value, and each `accepted_values` column (a column name to its
    values) holds one of them. Delta checks every row a write brings, so a row that breaks a
    rule never lands: the write fails with the constraint's name and the row's values, and no
    build reads the table to look for such rows, as a dbt test of the same rule would
    (docs/guarantees.md, "Every mart row is complete"). The hook renders the statement only
    when the table lacks the constraint or holds another version of it (Delta keeps the
    expression respaced, so spaces do not count); adding it checks the rows already there
    once. -#}
{% macro row_rules_constraint(name, not_null=[], accepted_values={}) -%}
    {%- set rules = [] -%}
    {%- for column in not_null -%}
        {%- do rules.append(column ~ ' is not null') -%}
    {%- endfor -%}
    {%- for column, values in accepted_values.items() -%}
        {%- do rules.append(column ~ " in ('" ~ values | join("', '") ~ "')") -%}
    {%- endfor -%}
    {%- set expression = rules | join(' and ') -%}
    {%- if execute -%}
        {%- set stored = [] -%}
        {%- for row in run_query('show tblproperties ' ~ this).rows -%}
            {%- if row[0] == 'delta.constraints.' ~ name | lower -%}
                {%- do stored.append(row[1] | replace(' ', '')) -%}
            {%- endif -%}
        {%- endfor -%}
        {%- if stored != [expression | replace(' ', '')] -%}
            {%- if stored -%}
                {%- do run_query('alter table ' ~ this ~ ' drop constraint ' ~ name) -%}
            {%- endif -%}
            alter table {{ this }} add constraint {{ name }} check ({{ expression }})
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}
