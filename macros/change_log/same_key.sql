{#- Join condition: the rows aliased `left` and `right` are the same key of the same table.
    `left_key` / `right_key` name the key column on each side when it is not key_json (a
    primary key change's predecessor_key_json). -#}
{% macro same_key(left, right, left_key='key_json', right_key='key_json') -%}
    {{ left }}.source_system = {{ right }}.source_system
    and {{ left }}.source_name = {{ right }}.source_name
    and {{ left }}.source_table = {{ right }}.source_table
    and {{ left }}.{{ left_key }} = {{ right }}.{{ right_key }}
{%- endmacro %}
