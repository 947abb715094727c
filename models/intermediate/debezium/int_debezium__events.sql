{{
    config(
        partition_by=['landing_run'],
        on_schema_change='append_new_columns',
        pre_hook="{{ finer_scan_splits() }}",
        post_hook="{{ default_scan_splits() }}",
    )
}}

{{ flattened_new_lines(
    ref('stg_debezium__lines'),
    'debezium_flatten(new_lines.line, new_lines.source_name, '
    ~ unavailable_placeholders() ~ ')',
    [
        'column_types',
        'transaction_key',
        'data_collection_order',
        'transaction_status',
        'transaction_event_count',
        'transaction_collections',
    ],
) }}
