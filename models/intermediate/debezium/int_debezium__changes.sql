{{ config(materialized='view') }}

{{ keyed_changes(ref('int_debezium__events'), 'debezium') }}
