{{
    config(
        partition_by=['landing_run'],
    )
}}

{#- Debezium's changes as they apply (truncates too), each with the landing run it applies in:
    a change without a transaction block (a server without transaction metadata, a snapshot
    read) in its own; a change of a transaction in the run that released the transaction
    (int_debezium__transactions), so that no build shows part of it; an event that lands after
    its transaction was released (a redelivery, which counts once, or one its END did not count)
    in its own, as any late event. -#}
{%- set processed_through = max_processed(this, 'landing_run') if is_incremental() else -1 %}
{%- set first_runs = distinct_values(
    ref('int_debezium__transactions'), 'first_landing_run', 'landing_run > ' ~ processed_through
) %}

with changes as (
    select * from {{ ref('int_debezium__events') }}
    where error is null and op is not null
),

releases as (
    select * from {{ ref('int_debezium__transactions') }}
),

new_changes as (
    select * from changes
    where landing_run > {{ processed_through }}
),

new_releases as (
    select * from releases
    where landing_run > {{ processed_through }}
),

single_changes as (
    select
        *,
        landing_run as applied_run
    from new_changes
    where transaction_key is null
),

released_changes as (
    select
        changes.*,
        new_releases.landing_run as applied_run
    from changes
    inner join new_releases
        on
            changes.source_name = new_releases.source_name
            and changes.transaction_key = new_releases.transaction_key
            and changes.landing_run <= new_releases.landing_run
    where changes.landing_run >= {{ first_runs | min if first_runs else processed_through + 1 }}
),

late_changes as (
    select
        new_changes.*,
        new_changes.landing_run as applied_run
    from new_changes
    inner join releases
        on
            new_changes.source_name = releases.source_name
            and new_changes.transaction_key = releases.transaction_key
            and new_changes.landing_run > releases.landing_run
),

applied_changes as (
    select * from single_changes
    union all
    select * from released_changes
    union all
    select * from late_changes
),

final as (
    select
        source_name,
        file_path,
        line_number,
        {%- for field in change_fields().split(',') %}
            {{ field }},
        {%- endfor %}
        error,
        transaction_key,
        landed_at,
        applied_run as landing_run
    from applied_changes
)

select * from final
