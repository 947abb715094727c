{{
    config(
        partition_by=['landing_run'],
        on_schema_change='append_new_columns',
        pre_hook="{{ finer_scan_splits() }}",
        post_hook="{{ default_scan_splits() }}",
    )
}}

{#- Every change stream row of new landing runs decoded by the `spanner_flatten` UDF
    (python_udfs/spanner/): one row per mod of a data change record, per heartbeat and per
    announced child partition, or the reason a line or mod is quarantined. A bad mod keeps its
    record's identity, so the record still counts towards its transaction. Snapshot files are no
    part of the stream's partition records (int_spanner__snapshot_rows). -#}
{%- set processed_through = landing_runs_processed() %}

with new_lines as (
    select * from {{ ref('stg_spanner__lines') }}
    where landing_run > {{ processed_through }} and not {{ is_snapshot_file('spanner') }}
),

decoded_rows as (
    select
        new_lines.*,
        decoded.record
    from new_lines
        lateral view explode(
            spanner_flatten(new_lines.line, new_lines.source_name)
        ) decoded as record
),

final as (
    select
        decoded_rows.source_name,
        decoded_rows.file_path,
        decoded_rows.line_number,
        decoded_rows.record.record_kind,
        decoded_rows.record.partition_token,
        decoded_rows.record.record_ts,
        decoded_rows.record.record_sequence,
        decoded_rows.record.server_transaction_id,
        decoded_rows.record.records_in_transaction,
        decoded_rows.record.partitions_in_transaction,
        decoded_rows.record.value_capture_type,
        decoded_rows.record.mod_index,
        decoded_rows.record.column_names,
        decoded_rows.record.column_types,
        decoded_rows.record.child_token,
        decoded_rows.record.parent_tokens,
        {#- committed_at: epoch microseconds from the UDF, a timestamp from here on (below). #}
        {%- for field in change_fields().split(',') if field != 'committed_at' %}
            decoded_rows.record.{{ field }},
        {%- endfor %}
        decoded_rows.landed_at,
        decoded_rows.landing_run,
        timestamp_micros(decoded_rows.record.committed_at) as committed_at,
        coalesce(decoded_rows.load_error, decoded_rows.record.error) as error,
        case
            when decoded_rows.load_error is not null or decoded_rows.record.error is not null
                then decoded_rows.line
        end as raw_line
    from decoded_rows
)

select * from final
