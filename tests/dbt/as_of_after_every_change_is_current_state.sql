-- cdc_as_of at a moment after every change gives exactly cdc_current's rows (of the keys a
-- scheduled run rewrote, macros/marts/tested_from_landing_run.sql: both sides keep the same keys).
with as_of_state as (
    select
        source_system,
        source_name,
        source_table,
        key_json,
        row_json
    from {{ cdc_as_of('9999-12-31 00:00:00', rows_under_test(ref('cdc_history'))) }}
),

current_state as (
    select
        source_system,
        source_name,
        source_table,
        key_json,
        row_json
    from {{ rows_under_test(ref('cdc_current')) }}
),

only_as_of as (
    select * from as_of_state
    except
    select * from current_state
),

only_current as (
    select * from current_state
    except
    select * from as_of_state
),

final as (
    select * from only_as_of
    union all
    select * from only_current
)

select * from final
