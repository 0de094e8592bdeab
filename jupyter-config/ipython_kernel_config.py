# Load the synth_nb extension (%synth_train) in every new IPython kernel of this profile.
# Copy into the folder printed by `ipython locate profile default`, or run `synth-nb enable`.
c = get_config()  # noqa: F821  (provided by IPython when it reads this file)
c.InteractiveShellApp.extensions.append("synth_nb")
