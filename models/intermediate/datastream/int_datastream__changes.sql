{{ config(materialized='view') }}

{{ keyed_changes(ref('int_datastream__events'), 'datastream') }}
