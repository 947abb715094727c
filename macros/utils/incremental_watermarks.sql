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
    one would be read by as many near-empty tasks per scan; `coalesce_output` lets adaptive
    execution merge them; a set as large as the input keeps its full-sized partitions
    (docs/decisions/007). Drop it when the model is done (`uncache_view`). -#}
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
