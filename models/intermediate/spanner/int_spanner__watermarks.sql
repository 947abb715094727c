{{ config(materialized='view') }}

{#- A stream's low watermark (docs/sources/spanner.md; docs/decisions/004): the
    earliest progress over its open partitions; a change applies only at or below it. Every
    change at or below it has landed, from every partition that can hold one: a child partition
    starts at or after the point its parents ended, so an open parent holds its children back.
    With no partition open, everything landed is complete. -#}
with partitions as (
    select * from {{ ref('int_spanner__partitions') }}
),

final as (
    select
        source_name,
        {{ spanner_low_watermark('progress_ts', 'is_finished') }} as low_watermark_ts,
        count_if(not is_finished) as open_partitions,
        count_if(is_finished) as finished_partitions,
        max(last_landing_run) as last_landing_run
    from partitions
    group by source_name
)

select * from final
