{#- Hint for the select a partitioned model writes: rows of one partition go to one task. The
    last shuffle before the write is keyed by source key, so without it every task writes a
    file into every partition it holds rows of: tasks x partitions small files, and every later
    read opens them all (docs/decisions/002). Adaptive execution still splits a partition too
    large for one task and packs small ones together. -#}
{% macro write_clustered_by(column) -%}
    /*+ rebalance({{ column }}) */
{%- endmacro %}
