{#- How many partitions one source table's keys may fill: a table's cohorts are the numbers from
    its bucket times this, up to the next bucket's (docs/decisions/017). -#}
{% macro cohorts_per_table() -%}
    2048
{%- endmacro %}
