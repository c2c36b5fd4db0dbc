package tools.replay;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.common.protocol.heartbeat.MessageModel;

// A repo-level consumer (no module root above it): no workload of this repo runs it, and
// deploy/rate-service.yaml, a repo-level manifest named after rate-service/, must not be linked to it.
public class ReplayAll {
    public static void main(String[] args) throws Exception {
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer("replay-all");
        consumer.setNamesrvAddr("mq.internal:9876");
        consumer.setMessageModel(MessageModel.BROADCASTING);
        consumer.subscribe("prices", "*");
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> ConsumeConcurrentlyStatus.CONSUME_SUCCESS);
        consumer.start();
    }
}
