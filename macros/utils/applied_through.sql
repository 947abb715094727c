{#- A model whose input is a set of landing runs records the newest it has applied in the
    userMetadata of the Delta commit that applies them, beside the landing run every commit
    carries (cdc_warehouse/table_format.py): `{"landing_run": N, "applied_through": M}`. The
    mark is written by the same commit as the rows, so a run killed before it leaves the old
    mark, and reading it costs a look at the table's log, not a scan of its rows (a MAX over a
    table with deletion vectors reads every file). docs/decisions/011. -#}

{#- The landing run through which `relation` has applied its input: the mark of its newest
    commit that carries one (commits of `cdcw maintain` carry none); none when the table does
    not exist or no commit names one. `field='applied_from'` reads that commit's first run. -#}
{% macro applied_through(relation, field='applied_through') -%}
    {%- if not execute or relation is none -%}
        {{ return(none) }}
    {%- endif -%}
    {%- for commits_read in [20, 200, 2000] -%}
        {%- set commits = run_query('describe history ' ~ relation ~ ' limit ' ~ commits_read) -%}
        {%- for commit in commits.rows -%}
            {%- set mark = fromjson(commit['userMetadata'] or '{}', {}) -%}
            {%- if mark is mapping and mark.get('applied_through') is number -%}
                {{ return(mark.get(field)) }}
            {%- endif -%}
        {%- endfor -%}
        {%- if commits.rows | length < commits_read -%}
            {{ return(none) }}
        {%- endif -%}
    {%- endfor -%}
    {{ return(none) }}
{%- endmacro %}


{#- The session's commit metadata, as cdcw set it (a mapping; empty when unset). -#}
{% macro commit_metadata() -%}
    {%- set setting = run_query(
        'set spark.databricks.delta.commitInfo.userMetadata'
    ).rows[0][1] -%}
    {%- set metadata = fromjson(setting, {}) if setting.startswith('{') else {} -%}
    {{ return(metadata if metadata is mapping else {}) }}
{%- endmacro %}


{#- Pre-hook: the model's next commit marks `landing_run` applied, and `from_run` as the run
    after which its changes start (none: not recorded). -#}
{% macro mark_applied_through(landing_run, from_run=none) -%}
    {%- if execute -%}
        {%- set metadata = commit_metadata() -%}
        {%- do metadata.update({'applied_through': landing_run | int}) -%}
        {%- if from_run is not none -%}
            {%- do metadata.update({'applied_from': from_run | int}) -%}
        {%- endif -%}
        set spark.databricks.delta.commitInfo.userMetadata = {{ tojson(metadata) }}
    {%- endif -%}
{%- endmacro %}


{#- Post-hook: later commits of the session carry no mark of their own. -#}
{% macro unmark_applied_through() -%}
    {%- if execute -%}
        {%- set metadata = commit_metadata() -%}
        {%- do metadata.pop('applied_through', none) -%}
        {%- do metadata.pop('applied_from', none) -%}
        set spark.databricks.delta.commitInfo.userMetadata = {{ tojson(metadata) }}
    {%- endif -%}
{%- endmacro %}
