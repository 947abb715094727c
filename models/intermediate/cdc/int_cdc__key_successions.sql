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
{%- set processed_through = max_processed(this, 'landing_run') if is_incremental() else -1 %}
{#- A routine run's new changes are few: broadcasting their positions spares shuffling every
    half of the change log, and with none the scan of the old halves is skipped altogether.
    New changes bound the new positions from above. -#}
{%- set new_positions_hint = broadcast_hint(
    'new_half_positions',
    count_rows(ref('int_cdc__change_log'), 'landing_run > ' ~ processed_through)
) if is_incremental() else '' %}

{#- The chains are walked one change further back at a time, each step a join with the single
    changes, as deep as the longest chain: the run finds that depth first, with queries on the
    cached single changes (a walk ends, since positions fall along a chain; no chain is deeper
    than there are single changes). A run that brings no new single change writes no row, since
    every chain it would find was known. -#}
{%- set links = cached_view(
    'int_cdc__key_successions__links',
    key_succession_links(processed_through, new_positions_hint)
) %}
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
