{{
    config(
        materialized='incremental',
        incremental_strategy='append',
        partition_by=['landing_run'],
    )
}}

{{ flattened_new_lines(
    ref('stg_datastream__lines'),
    'datastream_flatten(new_lines.line, new_lines.source_name)',
    ['source_type', 'read_method'],
) }}
