{#- Dynamic partition overwrite only replaces partitions the query writes rows for; a partition
    whose every row went away (all its keys deleted) must be dropped explicitly. -#}
{% macro drop_partitions(relation, column, values) -%}
    {%- if values | length == 0 -%}
        select 1
    {%- else -%}
        alter table {{ relation }} drop if exists
        {%- for value in values %}
            partition ({{ column }} = {{ value }}){{ "," if not loop.last }}
        {%- endfor %}
    {%- endif -%}
{%- endmacro %}


{#- The partitions an incremental cdc_current run rewrites: those where cdc_history holds
    versions newer than cdc_current reflects. The model and its pre-hook both need them, and a
    hook does not see the model's variables. -#}
{% macro touched_current_cohorts() -%}
    {{ return(touched_cohorts(
        ref('cdc_history'), 'last_landing_run', max_processed(this, 'last_landing_run')
    )) }}
{%- endmacro %}


{#- Pre-hook of cdc_current: touched partitions where no key is live any more. -#}
{% macro drop_emptied_current_partitions() -%}
    {%- if not is_incremental() -%}
        select 1
    {%- else -%}
        {%- set touched = touched_current_cohorts() -%}
        {%- set live = distinct_values(
            ref('cdc_history'), 'key_cohort', 'is_current and ' ~ in_values('key_cohort', touched)
        ) -%}
        {{ drop_partitions(this, 'key_cohort', touched | reject('in', live) | list) }}
    {%- endif -%}
{%- endmacro %}


{#- Post-hook of a model that keeps one partition of `column` current: drops the older ones. -#}
{% macro drop_partitions_before_newest(relation, column) -%}
    {{ drop_partitions(relation, column, distinct_values(
        relation, column, column ~ ' < ' ~ max_processed(relation, column)
    )) }}
{%- endmacro %}
