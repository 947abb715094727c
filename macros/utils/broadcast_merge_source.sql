{#- This file holds `broadcast_merge_source` and `merge_source_is_broadcast`, the writer and the
    reader of one SQL comment: its format is their contract, so they share a file. -#}

{#- Says, in a merging model's SQL, that the rows it returns are few (at most `rows`, a bound the
    model counted, within var('cdc_broadcast_max_rows')): the MERGE then broadcasts them to its
    joins with the target, so that the passes that find the touched files and mark the replaced
    rows read the target without shuffling it. A SQL comment for the reason given in
    macros/utils/merge_only_into_partitions.sql. -#}
{% macro broadcast_merge_source(rows) -%}
    {%- if broadcast_hint('source', rows) -%}
        -- merge source: broadcast
    {%- endif -%}
{%- endmacro %}


{% macro merge_source_is_broadcast(compiled_code) -%}
    {{ return('-- merge source: broadcast' in (compiled_code or '')) }}
{%- endmacro %}
