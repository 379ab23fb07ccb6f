"""TensorFlow under aml-launch --framework tensorflow: MultiWorkerMirroredStrategy (Keras 2,
tf_keras) for a few steps on CPU, from the TF_CONFIG that aml-launch wrote. Every worker prints
one line the test reads: its place and a checksum of the weights after training."""
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ["TF_USE_LEGACY_KERAS"] = "1"
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf_keras as keras  # noqa: E402


def main():
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    task = json.loads(os.environ["TF_CONFIG"])["task"]
    resolver = strategy.cluster_resolver
    with strategy.scope():
        keras.utils.set_random_seed(0)
        model = keras.Sequential([keras.layers.Dense(1, input_shape=(8,))])
        model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
    rng = np.random.default_rng(int(task["index"]))  # each worker its own data
    x = rng.standard_normal((256, 8)).astype("float32")
    model.fit(x, x.sum(axis=1, keepdims=True), batch_size=16, steps_per_epoch=5, epochs=1, verbose=0)
    checksum = sum(float(np.sum(w.astype("float64"))) for w in model.get_weights())
    chief = resolver.task_type == "worker" and resolver.task_id == 0
    print(f"CLIENT tensorflow env={type(resolver).__name__} rank={resolver.task_id} "
          f"world={strategy.num_replicas_in_sync} main={int(chief)} weights={checksum:.10f}", flush=True)


if __name__ == "__main__":
    main()
