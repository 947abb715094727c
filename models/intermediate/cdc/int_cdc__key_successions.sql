{{
    config(
        on_schema_change='append_new_columns',
        post_hook="{{ uncache_view('int_cdc__key_successions__links') }}",
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
{%- set processed_through = landing_runs_processed() %}
{%- set new_change_count = count_rows(
    ref('int_cdc__change_log'), 'landing_run > ' ~ processed_through
) if is_incremental() else none %}
{#- A routine run's new changes are few: broadcasting their positions spares shuffling every
    half of the change log, and with none the scan of the old halves is skipped altogether.
    New changes bound the new positions from above. -#}
{%- set new_positions_hint = broadcast_hint('new_half_positions', new_change_count)
    if is_incremental() else '' %}
{#- A run with no new change finds no new half, so no succession it does not know: it writes
    nothing (`nothing_to_write`) and neither caches nor walks the stored ones. -#}
{%- set nothing_new = is_incremental() and new_change_count == 0 %}

{#- The chains are walked one change further back at a time, each step a join with the single
    changes, as deep as the longest chain: the run finds that depth first, with queries on the
    cached single changes (a walk ends, since positions fall along a chain; no chain is deeper
    than there are single changes). A run that brings no new single change writes no row, since
    every chain it would find was known. -#}
{#- Every single primary key change: the ones whose second half this run brings (found by
    pairing the halves at the new halves' positions) and the ones stored (`chain_depth` is null
    on rows written before chains were followed, all of them single changes). Nested
    subqueries, not CTEs: the run caches this query and joins it with itself, and Spark
    substitutes a cached plan that holds a CTE for one of the two sides only (it recomputes the
    other). -#}
{%- set stored_single_change = 'true' -%}
{%- if is_incremental() and relation_has_column(this, 'chain_depth') -%}
    {%- set stored_single_change = 'coalesce(chain_depth, 1) = 1' -%}
{%- endif -%}
{%- set halves -%}
    -- The changes that can be half of a succession.
    select * from {{ ref('int_cdc__change_log') }}
    where
        op = 'delete'
        or op in ('insert', 'update') and image_has_unknown_values
{%- endset -%}
{%- set candidate_halves -%}
    -- A new succession has a new half at its position, so a run pairs only the halves there
    -- (the landing_run filter skips the change log's older files by their statistics).
    select {{ new_positions_hint }} halves.*
    from ({{ halves }}) as halves
    left semi join (
        select distinct
            source_system,
            source_name,
            source_table,
            txn_id,
            sort_pos
        from ({{ halves }}) as new_halves
        where landing_run > {{ processed_through }}
    ) as new_half_positions
        on
            halves.source_system = new_half_positions.source_system
            and halves.source_name = new_half_positions.source_name
            and halves.source_table = new_half_positions.source_table
            and halves.txn_id = new_half_positions.txn_id
            and halves.sort_pos = new_half_positions.sort_pos
{%- endset -%}
{%- set links_query -%}
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
    from ({{ candidate_halves }}) as incomplete_images
    inner join ({{ candidate_halves }}) as deletes
        on
            incomplete_images.source_system = deletes.source_system
            and incomplete_images.source_name = deletes.source_name
            and incomplete_images.source_table = deletes.source_table
            and incomplete_images.txn_id = deletes.txn_id
            and incomplete_images.sort_pos = deletes.sort_pos
            and incomplete_images.key_json != deletes.key_json
    where
        incomplete_images.op != 'delete'
        and deletes.op = 'delete'
        and (
            incomplete_images.landing_run > {{ processed_through }}
            or deletes.landing_run > {{ processed_through }}
        )
    group by
        incomplete_images.source_system,
        incomplete_images.source_name,
        incomplete_images.source_table,
        incomplete_images.key_json,
        incomplete_images.key_cohort,
        deletes.key_json,
        deletes.key_cohort,
        incomplete_images.sort_pos
    {%- if is_incremental() %}
        union all
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
        where {{ stored_single_change }}
    {%- endif %}
{%- endset %}
{%- if nothing_new %}
    {{ nothing_to_write() }}
{%- else %}
    {%- set links = cached_view('int_cdc__key_successions__links', links_query) %}
    {%- set link_count = count_rows(links, 'true') %}
    {%- set walk = namespace(depth=1, ended=false) %}
    {%- if count_rows(links, 'landing_run > ' ~ processed_through) > 0 %}
        {%- for depth in range(2, link_count + 2) if not walk.ended %}
            {%- set chains = '(' ~ succession_chains(links, depth, link_count) ~ ')' %}
            {%- if count_rows(chains, 'chain_depth = ' ~ depth) > 0 %}
                {%- set walk.depth = depth %}
            {%- else %}
                {%- set walk.ended = true %}
            {%- endif %}
        {%- endfor %}
    {%- endif %}

with chains as (
    {{ succession_chains(links, walk.depth, link_count) }}
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
{%- endif %}
