{#- Every single primary key change known to int_cdc__key_successions, as SQL: the ones whose
    second half this run brings (found by pairing the halves at the new halves' positions) and
    the ones it stored (`chain_depth` is null on rows written before chains were followed, all of
    them single changes). Nested subqueries, not CTEs: the model caches this query and joins it
    with itself, and Spark substitutes a cached plan that holds a CTE for one of the two sides
    only (it recomputes the other). -#}
{% macro key_succession_links(processed_through, new_positions_hint) -%}
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
{%- endmacro %}
