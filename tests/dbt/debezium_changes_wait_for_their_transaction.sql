-- Debezium: every applied change of a transaction belongs to a released transaction and applies
-- in its release run or later, never before it. Under `cdcw run`, only the changes its build
-- applied.
{%- set applied = written_by_this_build('landing_run') %}
{%- set applied_changes_hint = broadcast_hint(
    'applied_changes',
    count_rows(ref('int_debezium__changes'), applied ~ ' and transaction_key is not null'),
) %}

with applied_changes as (
    select * from {{ ref('int_debezium__changes') }}
    where {{ applied }} and transaction_key is not null
),

releases as (
    select {{ applied_changes_hint }} releases.*
    from {{ ref('int_debezium__transactions') }} as releases
    left semi join applied_changes
        on
            releases.source_name = applied_changes.source_name
            and releases.transaction_key = applied_changes.transaction_key
),

final as (
    select
        applied_changes.source_name,
        applied_changes.transaction_key,
        applied_changes.file_path,
        applied_changes.line_number,
        applied_changes.landing_run,
        releases.landing_run as released_in_run
    from applied_changes
    left join releases
        on
            applied_changes.source_name = releases.source_name
            and applied_changes.transaction_key = releases.transaction_key
    where releases.landing_run is null or applied_changes.landing_run < releases.landing_run
)

select * from final
