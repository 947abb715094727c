{#- Incremental models learn what they already hold with a query run at compile time: the
    watermark and partition lists become literals, so Spark prunes partitions by them. -#}

{% macro max_processed(relation, column, default=-1) -%}
    {%- if not execute -%}
        {{ return(default) }}
    {%- endif -%}
    {%- set result = run_query("select max(" ~ column ~ ") from " ~ relation) -%}
    {%- set value = result.columns[0].values()[0] -%}
    {{ return(default if value is none else value) }}
{%- endmacro %}


{% macro distinct_values(relation, column, condition) -%}
    {%- if not execute -%}
        {{ return([]) }}
    {%- endif -%}
    {%- set result = run_query(
        "select distinct " ~ column ~ " from " ~ relation ~ " where " ~ condition
        ~ " order by 1"
    ) -%}
    {{ return(result.columns[0].values() | list) }}
{%- endmacro %}


{#- The result of `query` as a cached temporary view: a set that a model reads several times,
    at compile time too, is computed once. `storage_level` is Spark's (DISK_ONLY for sets as
    large as the input). Spark keeps all the shuffle partitions of a cached result, so a small
    one was read by 64 near-empty tasks per scan; `coalesce_output` lets adaptive execution
    merge them, except for a set as large as the input, where merging full-sized partitions
    was slower (docs/benchmarks/journal.md item 41). Drop it when the model is done (`uncache_view`). -#}
{% macro cached_view(name, query, storage_level='MEMORY_AND_DISK', coalesce_output=true) -%}
    {%- if execute -%}
        {%- do uncache_view(name) -%}
        {%- do run_query(
            "set spark.sql.optimizer.canChangeCachedPlanOutputPartitioning="
            ~ (coalesce_output | string | lower)
        ) -%}
        {%- do run_query(
            "cache table " ~ name ~ " options ('storageLevel' '" ~ storage_level ~ "') as "
            ~ query
        ) -%}
    {%- endif -%}
    {{ return(name) }}
{%- endmacro %}


{% macro uncache_view(name) -%}
    {%- if execute -%}
        {%- do run_query("uncache table if exists " ~ name) -%}
        {%- do run_query("drop view if exists " ~ name) -%}
    {%- endif -%}
{%- endmacro %}


{% macro in_values(column, values) -%}
    {%- if values | length == 0 -%}
        false
    {%- else -%}
        {{ column }} in ({{ values | join(", ") }})
    {%- endif -%}
{%- endmacro %}


{#- The keys whose history a run must recompute: keys with new changes, every key of a table a
    new truncate emptied, the successors of a primary key change whose half landed or whose
    old key changed (their unknown values continue the old key's), and the keys of a Spanner
    table that has a column seen for the first time. Returned as SQL, with
    each key's partition. -#}
{% macro history_changed_keys(processed_through) -%}
    select source_system, source_name, source_table, key_json, key_cohort
    from {{ ref('int_cdc__change_log') }}
    where landing_run > {{ processed_through }}
    union
    select registry.source_system, registry.source_name, registry.source_table, registry.key_json,
        registry.key_cohort
    from {{ ref('int_cdc__key_registry') }} as registry
    inner join {{ ref('int_cdc__truncates') }} as truncates
        on
            registry.source_system = truncates.source_system
            and registry.source_name = truncates.source_name
            and registry.source_table = truncates.source_table
    where truncates.landing_run > {{ processed_through }}
    union
    select successions.source_system, successions.source_name, successions.source_table,
        successions.key_json, successions.key_cohort
    from {{ ref('int_cdc__key_successions') }} as successions
    left semi join {{ ref('int_cdc__change_log') }} as predecessor_changes
        on
            {{ same_key('successions', 'predecessor_changes', left_key='predecessor_key_json') }}
            and predecessor_changes.landing_run > {{ processed_through }}
    union
    select source_system, source_name, source_table, key_json, key_cohort
    from {{ ref('int_cdc__key_successions') }}
    where landing_run > {{ processed_through }}
    {%- set new_column_condition = 'landing_run > ' ~ processed_through %}
    {%- if count_rows(ref('int_spanner__table_columns'), new_column_condition) | int > 0 %}
        union
        -- A Spanner table's images are completed with its columns as known when they are: a
        -- column seen for the first time counts in every earlier image of the table.
        select
            change_log.source_system,
            change_log.source_name,
            change_log.source_table,
            change_log.key_json,
            change_log.key_cohort
        from {{ ref('int_cdc__change_log') }} as change_log
        left semi join (
            select source_name, source_table
            from {{ ref('int_spanner__table_columns') }}
            where {{ new_column_condition }}
        ) as widened_tables
            on
                change_log.source_system = 'spanner'
                and change_log.source_name = widened_tables.source_name
                and change_log.source_table = widened_tables.source_table
    {%- endif %}
{%- endmacro %}


{#- Whether the key of the row aliased `alias` is in `changed_keys`, cdc_history's set of keys
    to recompute. `hint` is the set's broadcast_hint: in a routine run the set is small next to
    the tables it filters, and broadcasting it spares shuffling the whole table to the join. -#}
{% macro key_is_changed(alias, changed_keys, hint) -%}
    exists (
        select {{ hint }} 1 from {{ changed_keys }} as changed_keys
        where {{ same_key('changed_keys', alias) }}
    )
{%- endmacro %}


{#- A broadcast hint for `relation` when `rows` (counted by the caller) is at most
    var('cdc_broadcast_max_rows'), else nothing: Spark's own size estimates come from compressed
    parquet, ~10x below the hash table a broadcast builds, so sets of known size are hinted and
    larger ones left to a shuffle join. -#}
{% macro broadcast_hint(relation, rows) -%}
    {%- if rows <= var('cdc_broadcast_max_rows') | int -%}
        /*+ broadcast({{ relation }}) */
    {%- endif -%}
{%- endmacro %}


{#- Rows of `relation` where `condition` holds, as a number (0 before execution). -#}
{% macro count_rows(relation, condition) -%}
    {%- if not execute -%}
        {{ return(0) }}
    {%- endif -%}
    {%- set result = run_query('select count(*) from ' ~ relation ~ ' where ' ~ condition) -%}
    {{ return(result.columns[0].values()[0] | int) }}
{%- endmacro %}


{#- Whether `relation` has `column` (a table of an earlier version may not have it yet: dbt's
    on_schema_change adds it only after the model's query ran). -#}
{% macro relation_has_column(relation, column) -%}
    {%- if not execute -%}
        {{ return(true) }}
    {%- endif -%}
    {%- set names = adapter.get_columns_in_relation(relation) | map(attribute='name') | list -%}
    {{ return(column in names) }}
{%- endmacro %}
