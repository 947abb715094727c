{#- cdc_history's inputs, as SQL. The deduped and placed changes are read four times by the
    model; Spark SQL inlines a CTE at every reference, so the model caches this query once
    (`cached_view`) instead of scanning and sorting the change log four times. -#}

{#- Every change of the keys a run recomputes, once per event, placed in source order
    (`sort_key`); the predecessors' changes ride along as context (`is_context`). All windows
    partition by key alone, so the change log is shuffled once. Nested subqueries, not CTEs: Spark
    does not substitute a cached plan that holds a CTE into a query that has a WITH clause (it
    recomputes it), and cdc_history has one. A union matches columns by position, so each of
    its branches selects the stored change-log row through change_log_select. -#}
{% macro history_sorted_changes(changed_keys, touched, predecessor_cohorts, changed_key_count) -%}
    {%- set changed_keys_hint = broadcast_hint('changed_keys', changed_key_count) -%}
    {%- set predecessor_match = same_key(
        'change_log', 'key_successions', right_key='predecessor_key_json'
    ) -%}
    {%- set context_filter = 'false' -%}
    {%- set context_hint = '' -%}
    {%- if is_incremental() -%}
        {%- set context_hint = broadcast_hint('key_successions', changed_key_count) ~ ' ' -%}
        {%- set context_filter = in_values('change_log.key_cohort', predecessor_cohorts)
            ~ ' and not ' ~ key_is_changed('change_log', changed_keys, changed_keys_hint) -%}
    {%- endif -%}
    {%- set keyed_changes -%}
        select
            {{ change_log_select('change_log', stored=true, indent=12) }},
            false as is_context
        from {{ ref('int_cdc__change_log') }} as change_log
        {%- if is_incremental() %}
            where
                {{ in_values('change_log.key_cohort', touched) }}
                and {{ key_is_changed('change_log', changed_keys, changed_keys_hint) }}
        {%- endif %}
    {%- endset -%}
    select
        *,
        concat_ws(
            '.',
            {{ position_source_time('mono_ts') }},
            case when is_backfill then '0' else '1' end,
            sort_pos,
            case when op = 'delete' then '0' else '1' end,
            event_id
        ) as sort_key,
        max(has_unknown_values) over (
            partition by source_system, source_name, source_table, key_json
        ) as key_has_unknown_values
    from (
        select
            * except (has_unknown_values, is_completed),
            has_unknown_values or (
                is_completed
                and not is_context
                and op != 'delete'
                and exists(map_values(row_image), column_value -> column_value is null)
            ) as has_unknown_values
        from (
            -- A Spanner image names the columns its record carries: the table's others, as known
            -- when this runs, are there with no value, for the key's earlier changes to complete.
            -- The key's rows then reflect the run that brought the newest of them.
            select /*+ broadcast(table_columns) */
                placed_changes.* except (row_image, last_landing_run),
                greatest(
                    placed_changes.last_landing_run, table_columns.newest_landing_run
                ) as last_landing_run,
                table_columns.column_names is not null as is_completed,
                case
                    when table_columns.column_names is null then placed_changes.row_image
                    else map_from_entries(
                        transform(
                            array_union(
                                map_keys(placed_changes.row_image), table_columns.column_names
                            ),
                            column_name -> struct(
                                column_name, try_element_at(placed_changes.row_image, column_name)
                            )
                        )
                    )
                end as row_image
            from (
                -- A backfill read is placed by its source time among the key's CDC changes, which
                -- keep their source position order: mono_ts is the running maximum source time
                -- along it.
                select
                    *,
                    case
                        when is_backfill then order_ts
                        else max(case when not is_backfill then order_ts end) over (
                            partition by source_system, source_name, source_table, key_json
                            order by sort_pos, event_id
                            rows between unbounded preceding and current row
                        )
                    end as mono_ts,
                    not is_context
                    and op != 'delete'
                    and image_has_unknown_values as has_unknown_values
                from (
                    -- The first delivery of an event is the one ordered first among its copies;
                    -- ordering the copies side by side under the key keeps one shuffle for the
                    -- chain.
                    select
                        *,
                        not (
                            event_id <=> lag(event_id) over (
                                partition by source_system, source_name, source_table, key_json
                                order by event_id, landing_run, file_path, line_number
                            )
                        ) as is_first_delivery,
                        max(landing_run) over (
                            partition by source_system, source_name, source_table, key_json
                        ) as last_landing_run
                    from (
                        {{ keyed_changes }}
                        union all
                        -- A truncate deletes every key of its table at its position.
                        select
                            {{ change_log_select('truncates', {
                                'source_system': 'table_keys.source_system',
                                'source_name': 'table_keys.source_name',
                                'source_table': 'table_keys.source_table',
                                'key_json': 'table_keys.key_json',
                                'op': "'delete'",
                                'row_image': 'map_from_arrays(array(), array())',
                                'is_backfill': 'false',
                                'order_ts': 'cast(null as bigint)',
                                'file_path': 'cast(null as string)',
                                'line_number': 'cast(null as bigint)',
                                'image_has_unknown_values': 'false',
                                'key_cohort': 'table_keys.key_cohort',
                            }, stored=true, indent=28) }},
                            false as is_context
                        from (
                            select distinct
                                source_system, source_name, source_table, key_json, key_cohort
                            from ({{ keyed_changes }}) as keyed_changes
                        ) as table_keys
                        inner join {{ ref('int_cdc__truncates') }} as truncates
                            on
                                table_keys.source_system = truncates.source_system
                                and table_keys.source_name = truncates.source_name
                                and table_keys.source_table = truncates.source_table
                        union all
                        -- Changes of the old keys of primary key changes that this run does not
                        -- recompute: read only to complete their successors' values.
                        select
                            {{ context_hint ~ change_log_select(
                                'change_log', stored=true, indent=28
                            ) }},
                            true as is_context
                        from {{ ref('int_cdc__change_log') }} as change_log
                        left semi join (
                            {{ history_key_successions(changed_keys, touched, changed_keys_hint) }}
                        ) as key_successions
                            on
                                {{ predecessor_match }}
                        where {{ context_filter }}
                    ) as changes
                ) as deliveries
                where is_first_delivery
            ) as placed_changes
            left join (
                select
                    source_name,
                    source_table,
                    collect_set(column_name) as column_names,
                    max(landing_run) as newest_landing_run
                from {{ ref('int_spanner__table_columns') }}
                group by source_name, source_table
            ) as table_columns
                on
                    placed_changes.source_system = 'spanner'
                    and placed_changes.source_name = table_columns.source_name
                    and placed_changes.source_table = table_columns.source_table
        ) as completed_changes
    ) as flagged_changes
{%- endmacro %}
