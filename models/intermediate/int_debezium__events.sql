{{
    config(
        materialized='incremental',
        incremental_strategy='append',
        partition_by=['landing_run'],
    )
}}

{{ flattened_new_lines(
    ref('stg_debezium__lines'),
    'debezium_flatten(new_lines.line, new_lines.source_name, '
    ~ unavailable_placeholders() ~ ')',
) }}
