{#- The bucket of a source table's partitions, from its names alone, so that a query of one
    table computes its partitions without reading anything (docs/decisions/017). Two tables
    rarely share a bucket; when they do, they share partitions and their queries read both. The
    largest bucket times cohorts_per_table() stays an int. -#}
{% macro table_bucket(source_system, source_table) -%}
    pmod(xxhash64({{ source_system }}, {{ source_table }}), 1048575)
{%- endmacro %}
