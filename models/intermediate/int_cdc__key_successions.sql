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
{#- A routine run's new changes are few: broadcasting their positions spares shuffling every
    half of the change log, and with none the scan of the old halves is skipped altogether
    (docs/benchmarks.md item 45). New changes bound the new positions from above. -#}
{%- set new_positions_hint = broadcast_hint(
    'new_half_positions',
    count_rows(ref('int_cdc__change_log'), 'landing_run > ' ~ processed_through)
) if is_incremental() else '' %}

with change_log as (
    select * from {{ ref('int_cdc__change_log') }}
),

halves as (
    -- The changes that can be half of a succession.
    select * from change_log
    where
        op = 'delete'
        or op in ('insert', 'update') and image_has_unknown_values
),

new_half_positions as (
    -- A new succession has a new half at its position, so a run pairs only the halves there
    -- (the landing_run filter skips the change log's older files by their statistics).
    select distinct
        source_system,
        source_name,
        source_table,
        txn_id,
        sort_pos
    from halves
    where landing_run > {{ processed_through }}
),

candidate_halves as (
    select {{ new_positions_hint }} halves.*
    from halves
    left semi join new_half_positions
        on
            halves.source_system = new_half_positions.source_system
            and halves.source_name = new_half_positions.source_name
            and halves.source_table = new_half_positions.source_table
            and halves.txn_id = new_half_positions.txn_id
            and halves.sort_pos = new_half_positions.sort_pos
),

incomplete_images as (
    select * from candidate_halves
    where op != 'delete'
),

deletes as (
    select * from candidate_halves
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
