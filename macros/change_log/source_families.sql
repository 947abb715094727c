{#- The source families as the models that union them read them: python_udfs/families.py,
    the registry every part of the project reads, written out for the SQL (docs/decisions/013);
    tests/unit/test_families.py holds the two equal. In landing order.

    source_families() renders the family names; source_families(role) the families that have
    the role, each as `family:model`, or as `family` for a role that names no model:
      keyed_changes     int_cdc__source_changes: the view of its changes in the change-log shape
      change_rows       int_cdc__source_changes: the table of its released change rows, keyed
                        there (keyed_changes)
      decoded           cdc_quarantine: each model of decoded rows with `error`
      truncates         int_cdc__truncates: the model whose rows with op 'truncate' are its
                        truncates
      typed_changes     cdc_source_columns: the model whose every row carries `column_types`
      own_column_types  cdc_source_columns: a family whose CTE `<family>_schemas` reads them
      pending           cdc_source_freshness: a family whose CTE `<family>_pending` counts what
                        waits for later lines
      snapshots         cdc_source_freshness: a family with initial snapshot files, whose rows
                        with op 'snapshot' are reads, not commits of its log
    The lists render comma-separated (callers split them): text renders alike in dbt, in
    sqlfluff's templater and in plain Jinja (tests/project_macros.py). -#}
{% macro source_families(role=none) -%}
    {%- set families = [
        {
            'name': 'spanner',
            'changes': 'int_spanner__changes',
            'changes_keyed': false,
            'decoded': [
                'int_spanner__records',
                'int_spanner__snapshot_headers',
                'int_spanner__snapshot_rows',
            ],
            'truncates': none,
            'column_types': 'own',
            'pending': true,
            'snapshots': true,
        },
        {
            'name': 'datastream',
            'changes': 'int_datastream__changes',
            'changes_keyed': true,
            'decoded': ['int_datastream__events'],
            'truncates': none,
            'column_types': 'changes',
            'pending': false,
            'snapshots': false,
        },
        {
            'name': 'debezium',
            'changes': 'int_debezium__changes',
            'changes_keyed': false,
            'decoded': ['int_debezium__events', 'int_debezium__transaction_ends'],
            'truncates': 'int_debezium__changes',
            'column_types': 'changes',
            'pending': true,
            'snapshots': false,
        },
        {
            'name': 'pgoutput',
            'changes': 'int_pgoutput__changes',
            'changes_keyed': false,
            'decoded': [
                'int_pgoutput__messages',
                'int_pgoutput__changes',
                'int_pgoutput__snapshot_headers',
                'int_pgoutput__snapshot_rows',
            ],
            'truncates': 'int_pgoutput__changes',
            'column_types': 'own',
            'pending': true,
            'snapshots': true,
        },
    ] -%}
    {%- set roles = {
        'keyed_changes': [],
        'change_rows': [],
        'decoded': [],
        'truncates': [],
        'typed_changes': [],
        'own_column_types': [],
        'pending': [],
        'snapshots': [],
    } -%}
    {%- for family in families -%}
        {%- for model in family.decoded -%}
            {%- do roles.decoded.append(family.name ~ ':' ~ model) -%}
        {%- endfor -%}
    {%- endfor -%}
    {%- for family in families if family.changes_keyed -%}
        {%- do roles.keyed_changes.append(family.name ~ ':' ~ family.changes) -%}
    {%- endfor -%}
    {%- for family in families if not family.changes_keyed -%}
        {%- do roles.change_rows.append(family.name ~ ':' ~ family.changes) -%}
    {%- endfor -%}
    {%- for family in families if family.truncates -%}
        {%- do roles.truncates.append(family.name ~ ':' ~ family.truncates) -%}
    {%- endfor -%}
    {%- for family in families if family.column_types == 'changes' -%}
        {%- do roles.typed_changes.append(family.name ~ ':' ~ family.decoded[0]) -%}
    {%- endfor -%}
    {%- for family in families if family.column_types == 'own' -%}
        {%- do roles.own_column_types.append(family.name) -%}
    {%- endfor -%}
    {%- for family in families if family.pending -%}
        {%- do roles.pending.append(family.name) -%}
    {%- endfor -%}
    {%- for family in families if family.snapshots -%}
        {%- do roles.snapshots.append(family.name) -%}
    {%- endfor -%}
    {{- exceptions.raise_compiler_error('source_families: no role ' ~ role)
        if role is not none and role not in roles -}}
    {{- (families | map(attribute='name') if role is none else roles[role]) | join(',') -}}
{%- endmacro %}
