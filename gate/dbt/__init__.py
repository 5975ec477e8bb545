"""dbt projects as dbt sees them: projects and their paths, model identity, model files.

The format parser of dbt properties files is ``gate.formats.dbt``; this folder
is what needs the repository around those files (it reads through ``gate.git``).
"""
