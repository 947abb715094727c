{{
    config(
        partition_by=['landing_run'],
        on_schema_change='append_new_columns',
        pre_hook="{{ finer_scan_splits() }}",
        post_hook="{{ default_scan_splits() }}",
    )
}}

{{ flattened_new_lines(
    ref('stg_datastream__lines'),
    'datastream_flatten(new_lines.line, new_lines.source_name)',
    ['source_type', 'read_method', 'key_basis', 'column_types'],
) }}
