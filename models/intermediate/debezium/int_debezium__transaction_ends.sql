{#- Each transaction's END record: the first to land (landing run, file, line) is the one whose
    counts the transaction waits for (int_debezium__transactions). An END landed again with the
    same counts is a redelivery and counts once (it is not kept); one with other counts
    contradicts the first and is kept with the reason it is quarantined (cdc_quarantine). -#}
{%- set processed_through = landing_runs_processed() %}

with new_ends as (
    select
        source_name,
        file_path,
        line_number,
        transaction_key,
        transaction_event_count as event_count,
        transaction_collections as data_collections,
        committed_at,
        landed_at,
        landing_run
    from {{ ref('int_debezium__events') }}
    where
        transaction_key is not null
        and transaction_status = 'END'
        and error is null
        and landing_run > {{ processed_through }}
),

ends as (
    select * from new_ends
    {%- if is_incremental() %}
        union all
        -- The first END of each transaction that has one already.
        select
            first_end.source_name,
            first_end.file_path,
            first_end.line_number,
            first_end.transaction_key,
            first_end.event_count,
            first_end.data_collections,
            first_end.committed_at,
            first_end.landed_at,
            first_end.landing_run
        from {{ this }} as first_end
        left semi join new_ends
            on
                first_end.source_name = new_ends.source_name
                and first_end.transaction_key = new_ends.transaction_key
        where first_end.error is null
    {%- endif %}
),

ordered_ends as (
    select
        *,
        -- Maps do not compare: the counts as a sorted array of (collection, count).
        array_sort(map_entries(data_collections)) as sorted_counts,
        row_number() over (
            partition by source_name, transaction_key
            order by landing_run, file_path, line_number
        ) as end_number
    from ends
),

first_ends as (
    select * from ordered_ends
    where end_number = 1
),

kept_ends as (
    -- The first END, and each later one that contradicts it, with the reason.
    select
        ordered_ends.source_name,
        ordered_ends.file_path,
        ordered_ends.line_number,
        ordered_ends.transaction_key,
        ordered_ends.event_count,
        ordered_ends.data_collections,
        ordered_ends.committed_at,
        ordered_ends.landed_at,
        ordered_ends.landing_run,
        case
            when ordered_ends.end_number > 1
                then concat(
                    'END of transaction ', ordered_ends.transaction_key, ' counts ',
                    to_json(ordered_ends.data_collections), ', its first END (',
                    first_ends.file_path, ' line ', first_ends.line_number, ') counts ',
                    to_json(first_ends.data_collections), ': the first END counts'
                )
        end as error
    from ordered_ends
    inner join first_ends
        on
            ordered_ends.source_name = first_ends.source_name
            and ordered_ends.transaction_key = first_ends.transaction_key
    where
        ordered_ends.end_number = 1
        or ordered_ends.sorted_counts != first_ends.sorted_counts
),

final as (
    select
        *,
        -- The line's text is not kept for a good line; the reason names both ENDs' counts.
        cast(null as string) as raw_line
    from kept_ends
    where landing_run > {{ processed_through }}
)

select * from final
