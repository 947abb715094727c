{#- A Spanner stream's partition progress and low watermark (docs/sources/spanner.md;
    docs/decisions/004), written once for the current watermark (int_spanner__partitions,
    int_spanner__watermarks) and for the watermark as of each landing run
    (int_spanner__transactions). A transaction applies only once all its records have landed
    and it is at or below its stream's low watermark: every change at or below the watermark
    has landed, from every partition that can hold one. -#}

{#- A stream's low watermark: the earliest progress over its open partitions; with none open,
    everything landed is complete. -#}
{% macro spanner_low_watermark(progress_ts, is_finished) -%}
    coalesce(
        min(case when not {{ is_finished }} then {{ progress_ts }} end),
        max({{ progress_ts }})
    )
{%- endmacro %}
