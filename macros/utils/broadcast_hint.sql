{#- A broadcast hint for `relation` when `rows` (counted by the caller) is at most
    var('cdc_broadcast_max_rows'), else nothing: Spark's own size estimates come from compressed
    parquet, ~10x below the hash table a broadcast builds, so sets of known size are hinted and
    larger ones left to a shuffle join. -#}
{% macro broadcast_hint(relation, rows) -%}
    {%- if rows <= var('cdc_broadcast_max_rows') | int -%}
        /*+ broadcast({{ relation }}) */
    {%- endif -%}
{%- endmacro %}
