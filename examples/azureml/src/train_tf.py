"""The TensorFlow example's script: a multi-worker strategy from the TF_CONFIG Azure ML
writes (aml-launch leaves it as it is)."""
import json
import os

import tensorflow as tf

strategy = tf.distribute.MultiWorkerMirroredStrategy()
task = json.loads(os.environ["TF_CONFIG"])["task"]
print(f"worker {task['index']} of {strategy.num_replicas_in_sync} replicas")
