{#- Changes of a set of keys placed in their source order, as the version rules read them
    (int_cdc__key_states). `changes` is a relation of change-log rows (as
    int_cdc__change_log stores them) with `is_context` (a predecessor key's change, read only for
    the values it knows), `is_seed` (a key's state after the changes applied before: it sits at
    `seed_sort_key`, its row image holds the values the key knew, its sort position and event
    the key's last source position, its order time the latest source time on it) and
    `seed_transition`. Each change once (its first delivery), with:
    - `sort_key`: the order of the key's changes (docs/decisions/001): its source time along its
      source positions (`mono_ts`), backfill before CDC at one time, its source position, a
      delete before the change at the same position, its event id;
    - a Spanner image widened to the table's columns as known now, the missing ones unknown;
    - `has_unknown_values` (this change leaves a column unknown), `key_has_unknown_values`;
    - `table_run`: for a Spanner table, the newest run that showed it a column (every image of
      the table depends on it).
    Nested subqueries: a union matches columns by position, and each branch names them. -#}
{% macro placed_changes(changes) -%}
    select
        * except (seed_sort_key),
        case
            when is_seed then seed_sort_key
            else concat_ws(
                '.',
                {{ position_source_time('mono_ts') }},
                case when is_backfill then '0' else '1' end,
                sort_pos,
                case when op = 'delete' then '0' else '1' end,
                event_id
            )
        end as sort_key,
        max(has_unknown_values) over (
            partition by source_system, source_name, source_table, key_json, is_context
        ) as key_has_unknown_values
    from (
        select
            * except (has_unknown_values, is_completed),
            has_unknown_values or (
                is_completed
                and not is_context
                and not is_seed
                and op != 'delete'
                and exists(map_values(row_image), column_value -> column_value is null)
            ) as has_unknown_values
        from (
            -- A Spanner image names the columns its record carries: the table's others, as known
            -- when this runs, are there with no value, for the key's earlier changes to complete.
            select /*+ broadcast(table_columns) */
                placed.* except (row_image),
                coalesce(table_columns.newest_landing_run, -1) as table_run,
                table_columns.column_names is not null and not placed.is_seed as is_completed,
                case
                    when table_columns.column_names is null or placed.is_seed then placed.row_image
                    else map_from_entries(
                        transform(
                            array_union(map_keys(placed.row_image), table_columns.column_names),
                            column_name -> struct(
                                column_name, try_element_at(placed.row_image, column_name)
                            )
                        )
                    )
                end as row_image
            from (
                -- A backfill read is placed by its source time among the key's CDC changes,
                -- which keep their source position order: mono_ts is the running maximum source
                -- time along it (a seed carries the key's latest).
                select
                    *,
                    case
                        when is_backfill then order_ts
                        else max(case when not is_backfill then order_ts end) over (
                            partition by
                                source_system, source_name, source_table, key_json, is_context
                            order by sort_pos, event_id
                            rows between unbounded preceding and current row
                        )
                    end as mono_ts,
                    not is_context
                    and not is_seed
                    and op != 'delete'
                    and image_has_unknown_values as has_unknown_values
                from (
                    -- The first delivery of an event is the one ordered first among its copies
                    -- (a seed before them: the event was applied before). A key recomputed and
                    -- read as a successor's context has each change twice, once each way.
                    select
                        *,
                        is_seed or not (
                            event_id <=> lag(event_id) over (
                                partition by
                                    source_system, source_name, source_table, key_json, is_context
                                order by event_id, is_seed desc, landing_run, file_path, line_number
                            )
                        ) as is_first_delivery
                    from {{ changes }}
                ) as deliveries
                where is_first_delivery
            ) as placed
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
                    placed.source_system = 'spanner'
                    and placed.source_name = table_columns.source_name
                    and placed.source_table = table_columns.source_table
        ) as completed_changes
    ) as flagged_changes
{%- endmacro %}
