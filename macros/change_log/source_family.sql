{#- The per-family models share their shape; each family's model names its raw table, its UDF
    and its extra columns, and these macros write the SQL once. -#}

{#- Staging: a family's raw landed lines, typed and named. -#}
{% macro staged_lines(raw_table) -%}
with source as (
    -- Runs the manifest lists: an interrupted landing's lines wait for the run that finishes it.
    select * from {{ source('cdc_raw', raw_table) }}
    where landing_run <= (select max(landing_run) from {{ source('cdc_raw', 'landed_files') }})
),

final as (
    select
        source_name,
        file_path,
        line_number,
        -- Files are read as bytes: a line that is not UTF-8 would fail the decoders' Arrow
        -- batch (and with it the run), so it is made valid here and quarantined below.
        make_valid_utf8(line) as line,
        coalesce(
            load_error,
            case
                when not is_valid_utf8(line)
                    then 'not valid UTF-8 (invalid bytes shown as U+FFFD in the line)'
            end
        ) as load_error,
        landed_at,
        landing_run
    from source
)

select * from final
{%- endmacro %}


{#- Lines of landing runs this model has not seen, flattened by the family's UDF into the
    change-log fields (docs/decisions/001) or an error; committed_at, epoch microseconds from
    the UDF, becomes a timestamp. -#}
{% macro flattened_new_lines(lines, flatten_call, extra_fields=[]) -%}
    {%- set processed_through = max_processed(this, 'landing_run') if is_incremental() else -1 %}
{%- set fields = change_fields().split(',') | reject('equalto', 'committed_at') | list
    + extra_fields %}

with new_lines as (
    select * from {{ lines }}
    where landing_run > {{ processed_through }}
),

flattened as (
    select
        new_lines.*,
        {{ flatten_call }} as flattened_event
    from new_lines
),

final as (
    select
        flattened.source_name,
        flattened.file_path,
        flattened.line_number,
    {%- for field in fields %}
            flattened.flattened_event.{{ field }},
    {%- endfor %}
        flattened.landed_at,
        flattened.landing_run,
        timestamp_micros(flattened.flattened_event.committed_at) as committed_at,
        coalesce(flattened.load_error, flattened.flattened_event.error) as error,
        case
            when
                flattened.load_error is not null
                or flattened.flattened_event.error is not null
                then flattened.line
        end as raw_line
    from flattened
)

select * from final
{%- endmacro %}


{#- A family's good changes of keys in the unified change-log shape. Rows without an op (e.g.
    Debezium tombstones) are not changes; truncates apply to whole tables (int_cdc__truncates). -#}
{% macro keyed_changes(events, source_system) -%}
with events as (
    select * from {{ events }}
    where error is null and op is not null and op != 'truncate'
),

final as (
    select
        {{ change_log_select('events', {'source_system': "'" ~ source_system ~ "'"}) }}
    from events
)

select * from final
{%- endmacro %}


{#- A family's truncates (they name a table, not a key) for int_cdc__truncates. -#}
{% macro truncates_of(events, source_system, processed_through) -%}
    select
        '{{ source_system }}' as source_system,
        source_name,
        source_table,
        sort_pos,
        committed_at,
        txn_id,
        event_id,
        landing_run
    from {{ events }}
    where error is null and op = 'truncate' and landing_run > {{ processed_through }}
{%- endmacro %}


{#- A family's bad lines for cdc_quarantine. -#}
{% macro rejected_lines(events, source_system, processed_through) -%}
    select
        '{{ source_system }}' as source_system,
        source_name,
        file_path,
        line_number,
        error as reason,
        raw_line,
        landed_at,
        landing_run
    from {{ events }}
    where error is not null and landing_run > {{ processed_through }}
{%- endmacro %}


{#- The configured placeholder strings (var cdc_unavailable_placeholders) as a SQL array. -#}
{% macro unavailable_placeholders() -%}
    array(
    {%- for placeholder in var('cdc_unavailable_placeholders') -%}
        '{{ placeholder | replace("'", "\\'") }}'{{ ", " if not loop.last }}
    {%- endfor -%}
    )
{%- endmacro %}
