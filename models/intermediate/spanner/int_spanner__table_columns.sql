{#- The tracked columns of each table, as named by the column_types of its landed records: a
    partial image (NEW_VALUES, OLD_AND_NEW_VALUES updates) lists only the columns it changed,
    so the others are learnt from the table's other records. -#}
{%- set processed_through = max_processed(this, 'landing_run') if is_incremental() else -1 %}

with new_columns as (
    select
        records.source_name,
        records.source_table,
        columns.column_name,
        min(records.landing_run) as landing_run
    from {{ ref('int_spanner__records') }} as records
        lateral view explode(records.column_names) columns as column_name
    where
        records.record_kind = 'data_change'
        and records.landing_run > {{ processed_through }}
    group by records.source_name, records.source_table, columns.column_name
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
