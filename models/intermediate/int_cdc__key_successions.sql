{{
    config(
        materialized='incremental',
        incremental_strategy='append',
    )
}}

{#- A primary key change deletes the old key and brings the new one (Debezium: an insert,
    pgoutput: an update) at the same position of one transaction; when the new key's image leaves values unknown (TOAST), they continue the old
    key's. The two halves may land in different runs and partitions (Kafka partitions by key),
    so successions are found whenever either half is new. -#}
{%- set processed_through = max_processed(this, 'landing_run') if is_incremental() else -1 %}

with change_log as (
    select * from {{ ref('int_cdc__change_log') }}
),

incomplete_images as (
    select * from change_log
    where op in ('insert', 'update') and exists(map_values(row_image), v -> v is null)
),

deletes as (
    select * from change_log
    where op = 'delete'
),

final as (
    select
        incomplete_images.source_system,
        incomplete_images.source_name,
        incomplete_images.source_table,
        incomplete_images.key_json,
        incomplete_images.key_cohort,
        deletes.key_json as predecessor_key_json,
        deletes.key_cohort as predecessor_key_cohort,
        incomplete_images.sort_pos,
        max(greatest(incomplete_images.landing_run, deletes.landing_run)) as landing_run
    from incomplete_images
    inner join deletes
        on
            incomplete_images.source_system = deletes.source_system
            and incomplete_images.source_name = deletes.source_name
            and incomplete_images.source_table = deletes.source_table
            and incomplete_images.txn_id = deletes.txn_id
            and incomplete_images.sort_pos = deletes.sort_pos
            and incomplete_images.key_json != deletes.key_json
    where
        incomplete_images.landing_run > {{ processed_through }}
        or deletes.landing_run > {{ processed_through }}
    group by
        incomplete_images.source_system,
        incomplete_images.source_name,
        incomplete_images.source_table,
        incomplete_images.key_json,
        incomplete_images.key_cohort,
        deletes.key_json,
        deletes.key_cohort,
        incomplete_images.sort_pos
)

select * from final
