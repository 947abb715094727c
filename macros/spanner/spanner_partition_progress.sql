{#- A partition's progress: the latest timestamp it reported, at least its announced start. -#}
{% macro spanner_partition_progress(reported_through_ts, announced_start_ts) -%}
    greatest(max({{ reported_through_ts }}), min({{ announced_start_ts }}))
{%- endmacro %}
