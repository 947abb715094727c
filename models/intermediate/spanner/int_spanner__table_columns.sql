{#- The tracked columns of each table, as named by the column_types of its landed records and
    by its snapshot files' headers (each names every column): a partial image (NEW_VALUES,
    OLD_AND_NEW_VALUES updates) lists only the columns it changed, so the others are learnt from
    the table's other records and snapshots. -#}
{%- set processed_through = landing_runs_processed() %}

with named_columns as (
    select
        source_name,
        source_table,
        column_names,
        landing_run
    from {{ ref('int_spanner__records') }}
    where record_kind = 'data_change' and landing_run > {{ processed_through }}
    union all
    select
        source_name,
        source_table,
        column_names,
        landing_run
    from {{ ref('int_spanner__snapshot_headers') }}
    where error is null and landing_run > {{ processed_through }}
),

new_columns as (
    select
        named_columns.source_name,
        named_columns.source_table,
        columns.column_name,
        min(named_columns.landing_run) as landing_run
    from named_columns
        lateral view explode(named_columns.column_names) columns as column_name
    group by named_columns.source_name, named_columns.source_table, columns.column_name
),

final as (
    select new_columns.*
    from
        new_columns
    {%- if is_incremental() %}
        left anti join {{ this }} as known
            on
                new_columns.source_name = known.source_name
                and new_columns.source_table = known.source_table
                and new_columns.column_name = known.column_name
    {%- endif %}
)

select * from final
