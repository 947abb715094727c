-- Spanner: a child partition's changes apply only once all its known parents have finished
-- (a parent never landed nor announced cannot be waited for). Under `cdcw run`, only the
-- changes its build applied.
with applied_changes as (
    select * from {{ ref('int_spanner__changes') }}
    where {{ written_by_this_build('landing_run') }}
),

applied_records as (
    select distinct
        records.source_name,
        records.partition_token
    from {{ ref('int_spanner__records') }} as records
    left semi join applied_changes
        on
            records.source_name = applied_changes.source_name
            and records.event_id = applied_changes.event_id
),

partitions as (
    select * from {{ ref('int_spanner__partitions') }}
),

parent_links as (
    select
        partitions.source_name,
        partitions.partition_token,
        parents.parent_token
    from partitions
        lateral view explode(partitions.parent_tokens) parents as parent_token
    where parents.parent_token is not null
),

final as (
    select
        applied_records.source_name,
        applied_records.partition_token,
        parent_links.parent_token
    from applied_records
    inner join parent_links
        on
            applied_records.source_name = parent_links.source_name
            and applied_records.partition_token = parent_links.partition_token
    inner join partitions as parent_partitions
        on
            parent_links.source_name = parent_partitions.source_name
            and parent_links.parent_token = parent_partitions.partition_token
    where not parent_partitions.is_finished
)

select * from final
