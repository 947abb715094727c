{{
    config(
        on_schema_change='append_new_columns',
    )
}}

{#- A primary key change deletes the old key and brings the new one (Debezium: an insert,
    pgoutput: an update) at the same position of one transaction; when the new key's image
    leaves values unknown (TOAST), they continue the old key's. The two halves may land in
    different runs and partitions (Kafka partitions by key), so successions are found whenever
    either half is new. A key changed again continues the whole chain (A to B, then B to C: C
    takes B's values from before its change, and those B took from A), so every earlier key of
    a chain is a row of its own, with the position of the change that ended it: the last
    value known before that position counts. -#}
{%- set processed_through = max_processed(this, 'landing_run') if is_incremental() else -1 %}
{#- A routine run's new changes are few: broadcasting their positions spares shuffling every
    half of the change log, and with none the scan of the old halves is skipped altogether.
    New changes bound the new positions from above. -#}
{%- set new_positions_hint = broadcast_hint(
    'new_half_positions',
    count_rows(ref('int_cdc__change_log'), 'landing_run > ' ~ processed_through)
) if is_incremental() else '' %}

with recursive change_log as (
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

new_links as (
    -- The primary key changes whose second half this run brings.
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
),

single_changes as (
    -- Every single primary key change known: earlier runs' (`chain_depth` is null on rows written
    -- before chains were followed, all of them single changes) and this run's.
    {%- if is_incremental() %}
        select
            source_system,
            source_name,
            source_table,
            key_json,
            key_cohort,
            predecessor_key_json,
            predecessor_key_cohort,
            sort_pos,
            landing_run
        from {{ this }}
        {%- if relation_has_column(this, 'chain_depth') %}
            where coalesce(chain_depth, 1) = 1
        {%- endif %}
        union all
    {%- endif %}
    select * from new_links
),

chains (
    source_system,
    source_name,
    source_table,
    key_json,
    key_cohort,
    predecessor_key_json,
    predecessor_key_cohort,
    sort_pos,
    landing_run,
    chain_depth
) as (
    -- Each key's earlier keys, back along its chain: the change before a key's change at
    -- sort_pos is one of the old key's, at an earlier position. Positions fall along a chain, so
    -- it ends even where a key comes back.
    select
        *,
        1 as chain_depth
    from single_changes
    union all
    select
        chains.source_system,
        chains.source_name,
        chains.source_table,
        chains.key_json,
        chains.key_cohort,
        single_changes.predecessor_key_json,
        single_changes.predecessor_key_cohort,
        single_changes.sort_pos,
        greatest(chains.landing_run, single_changes.landing_run) as landing_run,
        chains.chain_depth + 1 as chain_depth
    from chains
    inner join single_changes
        on
            chains.source_system = single_changes.source_system
            and chains.source_name = single_changes.source_name
            and chains.source_table = single_changes.source_table
            and chains.predecessor_key_json = single_changes.key_json
            and chains.sort_pos > single_changes.sort_pos
),

successions as (
    -- A succession is new when the latest change of its chain landed after the last run;
    -- reached along several chains, it was known as soon as the first had landed. A key is
    -- never its own predecessor (its own earlier values count anyway).
    select
        source_system,
        source_name,
        source_table,
        key_json,
        key_cohort,
        predecessor_key_json,
        predecessor_key_cohort,
        sort_pos,
        min(landing_run) as landing_run,
        min(chain_depth) as chain_depth
    from chains
    where predecessor_key_json != key_json
    group by
        source_system,
        source_name,
        source_table,
        key_json,
        key_cohort,
        predecessor_key_json,
        predecessor_key_cohort,
        sort_pos
),

final as (
    select * from successions
    where landing_run > {{ processed_through }}
)

select * from final
