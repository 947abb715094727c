{#- The contract's Spanner progress and low watermark (CONTRACT.md §2), written once for the
    current watermark (int_spanner__partitions, int_spanner__watermarks) and for the watermark
    as of each landing run (int_spanner__transactions). -#}

{#- A partition's progress: the latest timestamp it reported, at least its announced start. -#}
{% macro spanner_partition_progress(reported_through_ts, announced_start_ts) -%}
    greatest(max({{ reported_through_ts }}), min({{ announced_start_ts }}))
{%- endmacro %}


{#- A stream's low watermark: the earliest progress over its open partitions; with none open,
    everything landed is complete. -#}
{% macro spanner_low_watermark(progress_ts, is_finished) -%}
    coalesce(
        min(case when not {{ is_finished }} then {{ progress_ts }} end),
        max({{ progress_ts }})
    )
{%- endmacro %}
